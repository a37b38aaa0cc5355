/** The service a process runs, for logs and metrics ('crawl' for the embedded runner). */
export const SERVICE_NAME = Symbol('SERVICE_NAME');
