/** The service a process runs, for logs and metrics ('crawl' for the embedded runner). */
export const SERVICE_NAME = Symbol('SERVICE_NAME');

/**
 * True for a process whose HTTP routes serve people (the control plane): it stays ready through an outage of
 * the stores, saying it is degraded, so that it keeps its endpoints and can say what is wrong.
 */
export const STAYS_READY = Symbol('STAYS_READY');
