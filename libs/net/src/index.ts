export * from './address-policy';
export * from './embedded-ipv4';
export * from './cached-resolver';
export * from './system-hosts';
export * from './retry-after';
