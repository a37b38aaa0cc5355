import { Module } from '@nestjs/common';
import { FrontierProcessor } from './frontier.processor';
import { FrontierService } from './frontier.service';

@Module({ providers: [FrontierService, FrontierProcessor], exports: [FrontierService] })
export class FrontierModule {}
