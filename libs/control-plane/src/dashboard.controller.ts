import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join, sep } from 'node:path';
import { Controller, Get, Header } from '@nestjs/common';
import { ControlPlaneRoute } from './control-plane-route';
import { pipelineDiagram } from './dashboard.diagram';

/**
 * What the page may load and run: its own script and style sheet and calls to its own origin, nothing inline
 * and nothing from elsewhere, so it never reaches the internet (no CDN) and crawled text that found its way
 * into the page as markup could run nothing.
 */
const DASHBOARD_POLICY =
  "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

/** The page and its style sheet as written (the build copies them into dist/ beside the compiled script). */
const DASHBOARD_DIR = join(__dirname, '..', 'dashboard');

/** Where the page wants its pipeline diagram. */
const PIPELINE_PLACEHOLDER = '{{pipeline}}';

/**
 * The script as compiled by its own program (libs/control-plane/dashboard/tsconfig.json): beside the page
 * when running from dist/, or (running from sources, as under jest) its build in dist/.
 */
function compiledScript(): string {
  const here = join(DASHBOARD_DIR, 'dashboard.js');
  if (existsSync(here)) return here;
  const libs = `${sep}libs${sep}`;
  const at = DASHBOARD_DIR.lastIndexOf(libs);
  return join(DASHBOARD_DIR.slice(0, at), 'dist', DASHBOARD_DIR.slice(at + 1), 'dashboard.js');
}

/**
 * GET / (and /dashboard): the live dashboard, with its script and style sheet (dashboard.js, dashboard.css).
 * Read at each request, not at boot: a control plane run from the sources serves the files as they are being
 * edited, and one whose script was never built still boots and serves its API.
 */
@Controller()
@ControlPlaneRoute('shell')
export class DashboardController {
  @Get(['', 'dashboard'])
  @Header('content-type', 'text/html; charset=utf-8')
  @Header('cache-control', 'no-store')
  @Header('content-security-policy', DASHBOARD_POLICY)
  async page(): Promise<string> {
    const file = join(DASHBOARD_DIR, 'dashboard.html');
    const template = await readFile(file, 'utf8');
    if (!template.includes(PIPELINE_PLACEHOLDER)) throw new Error(`${file} has no ${PIPELINE_PLACEHOLDER} for the diagram`);
    // A function, so that a `$` in the SVG is never read as a replacement pattern.
    return template.replace(PIPELINE_PLACEHOLDER, () => pipelineDiagram());
  }

  @Get('dashboard.js')
  @Header('content-type', 'text/javascript; charset=utf-8')
  @Header('cache-control', 'no-store')
  @Header('x-content-type-options', 'nosniff')
  script(): Promise<string> {
    return readFile(compiledScript(), 'utf8');
  }

  @Get('dashboard.css')
  @Header('content-type', 'text/css; charset=utf-8')
  @Header('cache-control', 'no-store')
  @Header('x-content-type-options', 'nosniff')
  style(): Promise<string> {
    return readFile(join(DASHBOARD_DIR, 'dashboard.css'), 'utf8');
  }
}
