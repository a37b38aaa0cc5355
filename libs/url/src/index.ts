export * from './url-canonicalizer';
export * from './link-resolver';
export * from './url-scope';
export * from './extension-filter';
export * from './url-fingerprint';
export * from './spider-traps';
export * from './port-policy';
export * from './url-host';
