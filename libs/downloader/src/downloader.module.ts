import { Module } from '@nestjs/common';
import { DownloaderProcessor } from './downloader.processor';
import { DownloaderService } from './downloader.service';
import { RobotsService } from './robots.service';

@Module({ providers: [RobotsService, DownloaderService, DownloaderProcessor], exports: [DownloaderService] })
export class DownloaderModule {}
