import { Controller, Get, Header } from '@nestjs/common';
import { DASHBOARD_HTML } from './dashboard.html';
import { DASHBOARD_SCRIPT } from './dashboard.script';
import { DASHBOARD_STYLE } from './dashboard.style';
import { ControlPlaneRoute } from './control-plane-route';

/**
 * What the page may load and run: its own script and style sheet and calls to its own origin, nothing inline
 * and nothing from elsewhere, so it never reaches the internet (no CDN) and crawled text that found its way
 * into the page as markup could run nothing.
 */
const DASHBOARD_POLICY =
  "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

/** GET / (and /dashboard): the live dashboard, with its script and style sheet (dashboard.js, dashboard.css). */
@Controller()
@ControlPlaneRoute('shell')
export class DashboardController {
  @Get(['', 'dashboard'])
  @Header('content-type', 'text/html; charset=utf-8')
  @Header('cache-control', 'no-store')
  @Header('content-security-policy', DASHBOARD_POLICY)
  page(): string {
    return DASHBOARD_HTML;
  }

  @Get('dashboard.js')
  @Header('content-type', 'text/javascript; charset=utf-8')
  @Header('cache-control', 'no-store')
  @Header('x-content-type-options', 'nosniff')
  script(): string {
    return DASHBOARD_SCRIPT;
  }

  @Get('dashboard.css')
  @Header('content-type', 'text/css; charset=utf-8')
  @Header('cache-control', 'no-store')
  @Header('x-content-type-options', 'nosniff')
  style(): string {
    return DASHBOARD_STYLE;
  }
}
