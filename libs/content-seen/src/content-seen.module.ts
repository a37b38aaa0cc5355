import { Module } from '@nestjs/common';
import { PluginHostModule } from '@crawler/plugin-host';
import { ContentSeenProcessor } from './content-seen.processor';
import { ContentSeenService } from './content-seen.service';
import { WarcArchive } from './warc-archive.service';

@Module({ imports: [PluginHostModule], providers: [ContentSeenService, ContentSeenProcessor, WarcArchive], exports: [ContentSeenService] })
export class ContentSeenModule {}
