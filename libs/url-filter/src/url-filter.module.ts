import { Module } from '@nestjs/common';
import { UrlFilterProcessor } from './url-filter.processor';
import { UrlFilterService } from './url-filter.service';

@Module({ providers: [UrlFilterService, UrlFilterProcessor], exports: [UrlFilterService] })
export class UrlFilterModule {}
