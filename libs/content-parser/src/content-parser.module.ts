import { Module } from '@nestjs/common';
import { ContentParserProcessor } from './content-parser.processor';
import { ContentParserService } from './content-parser.service';

@Module({ providers: [ContentParserService, ContentParserProcessor], exports: [ContentParserService] })
export class ContentParserModule {}
