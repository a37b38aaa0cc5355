import { Module } from '@nestjs/common';
import { UrlSeenMetrics } from './url-seen.metrics';
import { UrlSeenProcessor } from './url-seen.processor';
import { UrlSeenService } from './url-seen.service';

@Module({ providers: [UrlSeenService, UrlSeenProcessor, UrlSeenMetrics], exports: [UrlSeenService] })
export class UrlSeenModule {}
