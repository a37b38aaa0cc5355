import type { CrawlerConfig } from '@crawler/config';
import { PostgresRecordsStore, RecordsSettingError, recordsSchemaProblem } from '@crawler/records';

/**
 * The check a process makes of RECORDS_URL before it starts: that CRAWLER_PREFIX can name the crawl's schema,
 * PostgreSQL answers (waiting up to RECORDS_STARTUP_WAIT_MS for it) and the schema's records tables are (or are
 * brought) up to date and of the shape this version expects. Answers the error naming the setting (the caller
 * exits), or null: once the application is being built, a failing provider would abort the process without
 * saying why. `say` gets the line telling that the tables of the old layout were adopted.
 */
export async function checkRecords(config: CrawlerConfig, say: (line: string) => void = () => {}): Promise<RecordsSettingError | null> {
  if (!config.recordsUrl) return null;
  const problem = recordsSchemaProblem(config.prefix);
  if (problem) return new RecordsSettingError(`${JSON.stringify(config.prefix)} names the crawl's schema in RECORDS_URL's database, and ${problem}`, 'CRAWLER_PREFIX');
  try {
    const store = await PostgresRecordsStore.open({
      url: config.recordsUrl,
      schema: config.prefix,
      poolSize: 1,
      startupWaitMs: config.recordsStartupWaitMs,
      notice: say,
    });
    await store.close();
    return null;
  } catch (error) {
    if (error instanceof RecordsSettingError) return error;
    throw error;
  }
}
