import { BadRequestException, Body, Controller, Get, Post } from '@nestjs/common';
import { z } from 'zod';
import { CrawlControlService, SeedError } from './crawl-control.service';

const SeedsBody = z.object({ urls: z.array(z.string()).min(1).max(100_000) });

@Controller()
export class CrawlController {
  constructor(private readonly control: CrawlControlService) {}

  /** POST /seeds {"urls": ["https://example.com/", "example.org"]} */
  @Post('seeds')
  async seeds(@Body() body: unknown) {
    const parsed = SeedsBody.safeParse(body);
    if (!parsed.success) throw new BadRequestException(`expected {"urls": [string, …]}: ${parsed.error.issues[0].message}`);
    try {
      return { accepted: await this.control.submitSeeds(parsed.data.urls) };
    } catch (error) {
      if (error instanceof SeedError) throw new BadRequestException({ message: error.message, problems: error.problems });
      throw error;
    }
  }

  /** GET /status: per-queue depths, crawl totals, and whether the crawl is complete. */
  @Get('status')
  status() {
    return this.control.status();
  }
}
