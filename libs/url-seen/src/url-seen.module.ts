import { Module } from '@nestjs/common';
import { UrlSeenProcessor } from './url-seen.processor';
import { UrlSeenService } from './url-seen.service';

@Module({ providers: [UrlSeenService, UrlSeenProcessor], exports: [UrlSeenService] })
export class UrlSeenModule {}
