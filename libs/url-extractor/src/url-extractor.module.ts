import { Module } from '@nestjs/common';
import { PluginHostModule } from '@crawler/plugin-host';
import { UrlExtractorProcessor } from './url-extractor.processor';
import { UrlExtractorService } from './url-extractor.service';

@Module({ imports: [PluginHostModule], providers: [UrlExtractorService, UrlExtractorProcessor], exports: [UrlExtractorService] })
export class UrlExtractorModule {}
