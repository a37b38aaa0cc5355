import { Module } from '@nestjs/common';
import { UrlExtractorProcessor } from './url-extractor.processor';
import { UrlExtractorService } from './url-extractor.service';

@Module({ providers: [UrlExtractorService, UrlExtractorProcessor], exports: [UrlExtractorService] })
export class UrlExtractorModule {}
