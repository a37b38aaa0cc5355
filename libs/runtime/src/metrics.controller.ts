import { Controller, Get, Header } from '@nestjs/common';
import { Registry } from 'prom-client';

/** Prometheus scrape endpoint. */
@Controller()
export class MetricsController {
  constructor(private readonly registry: Registry) {}

  @Get('metrics')
  @Header('content-type', 'text/plain; version=0.0.4')
  metrics(): Promise<string> {
    return this.registry.metrics();
  }
}
