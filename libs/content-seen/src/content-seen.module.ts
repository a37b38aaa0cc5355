import { Module } from '@nestjs/common';
import { ContentSeenProcessor } from './content-seen.processor';
import { ContentSeenService } from './content-seen.service';

@Module({ providers: [ContentSeenService, ContentSeenProcessor], exports: [ContentSeenService] })
export class ContentSeenModule {}
