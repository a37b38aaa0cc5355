import { checkFetchRoutes, DownloaderModule } from '@crawler/downloader';
import { bootstrapService } from '@crawler/runtime';

void bootstrapService('downloader', DownloaderModule, { startChecks: [checkFetchRoutes] });
