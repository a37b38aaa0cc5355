import { UrlFilterModule } from '@crawler/url-filter';
import { bootstrapService } from '@crawler/runtime';

void bootstrapService('url-filter', UrlFilterModule);
