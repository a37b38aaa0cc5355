import { Module } from '@nestjs/common';
import { CrawlControlService } from './crawl-control.service';
import { CrawlController } from './crawl.controller';

@Module({ controllers: [CrawlController], providers: [CrawlControlService], exports: [CrawlControlService] })
export class ControlPlaneModule {}
