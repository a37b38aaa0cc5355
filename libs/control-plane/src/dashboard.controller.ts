import { Controller, Get, Header } from '@nestjs/common';
import { DASHBOARD_HTML } from './dashboard.html';
import { ControlPlaneRoute } from './control-plane-route';

/**
 * GET / (and /dashboard): the live dashboard. Its policy allows nothing but this origin and the page's own
 * inline style and script, so it never reaches the internet (no CDN) and crawled text cannot load anything.
 */
@Controller()
@ControlPlaneRoute('shell')
export class DashboardController {
  @Get(['', 'dashboard'])
  @Header('content-type', 'text/html; charset=utf-8')
  @Header('cache-control', 'no-store')
  @Header(
    'content-security-policy',
    "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
  )
  page(): string {
    return DASHBOARD_HTML;
  }
}
