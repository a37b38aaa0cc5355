export * from './address-policy';
export * from './embedded-ipv4';
