export { SearchClient, type ClientOptions, type RequestOptions } from './client.js';
export { ClientError } from './errors.js';
