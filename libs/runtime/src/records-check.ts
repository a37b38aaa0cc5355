import type { CrawlerConfig } from '@crawler/config';
import { PostgresRecordsStore, RecordsSettingError } from '@crawler/records';

/**
 * The check a process makes of RECORDS_URL before it starts: that PostgreSQL answers (waiting up to
 * RECORDS_STARTUP_WAIT_MS for it) and its records tables are (or are brought) up to date and of the shape
 * this version expects. Answers the error naming the setting (the caller exits), or null: once the
 * application is being built, a failing provider would abort the process without saying why.
 */
export async function checkRecords(config: CrawlerConfig): Promise<RecordsSettingError | null> {
  if (!config.recordsUrl) return null;
  try {
    const store = await PostgresRecordsStore.open({ url: config.recordsUrl, poolSize: 1, startupWaitMs: config.recordsStartupWaitMs });
    await store.close();
    return null;
  } catch (error) {
    if (error instanceof RecordsSettingError) return error;
    throw error;
  }
}
