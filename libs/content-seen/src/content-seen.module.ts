import { Module } from '@nestjs/common';
import { ContentSeenProcessor } from './content-seen.processor';
import { ContentSeenService } from './content-seen.service';
import { WarcArchive } from './warc-archive.service';

@Module({ providers: [ContentSeenService, ContentSeenProcessor, WarcArchive], exports: [ContentSeenService] })
export class ContentSeenModule {}
