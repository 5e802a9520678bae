export { createGatehouse } from './client.js';
export type { Degraded, Gatehouse, GatehouseOptions, GatehouseState, Listener } from './client.js';
export { GatehouseError } from './errors.js';
export type { ImageInput, ProfileUpdate, SignUpParams } from './flows.js';
export { imageDimensions, imageFacts, type ImageFacts } from './image.js';
export type { SessionInfo } from './session.js';
export type { StorageAdapter, StorageOption, StoredSession } from './storage.js';
export type * from './types.js';
export type { ErrorCode } from '@gatehouse/contract';
