import { Module } from '@nestjs/common';
import { PluginHostModule } from '@crawler/plugin-host';
import { UrlFilterProcessor } from './url-filter.processor';
import { UrlFilterService } from './url-filter.service';

@Module({ imports: [PluginHostModule], providers: [UrlFilterService, UrlFilterProcessor], exports: [UrlFilterService] })
export class UrlFilterModule {}
