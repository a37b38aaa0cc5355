import 'reflect-metadata';
import { crawlCommand } from './crawl-options';
import { runEmbeddedCrawl } from './embedded-crawl';

crawlCommand(async (options) => {
  process.exitCode = await runEmbeddedCrawl(options);
})
  .parseAsync()
  .catch((error) => {
    process.stderr.write(`crawl: ${error instanceof Error ? error.stack : String(error)}\n`);
    process.exit(1);
  });
