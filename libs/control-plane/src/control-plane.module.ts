import { Module } from '@nestjs/common';
import { CrawlControlService } from './crawl-control.service';
import { CrawlController } from './crawl.controller';
import { FrontierController } from './frontier.controller';

@Module({ controllers: [CrawlController, FrontierController], providers: [CrawlControlService], exports: [CrawlControlService] })
export class ControlPlaneModule {}
