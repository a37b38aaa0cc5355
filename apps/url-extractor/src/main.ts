import { UrlExtractorModule } from '@crawler/url-extractor';
import { bootstrapService } from '@crawler/runtime';

void bootstrapService('url-extractor', UrlExtractorModule);
