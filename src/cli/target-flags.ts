/** The flags every ops command shares: where it acts (a local database or a server) and `--json`. */
import { Flags } from '@oclif/core';

export const targetFlags = {
  'db-path': Flags.string({ description: 'local database directory (it must exist: nothing is created)', default: './data.ms', exclusive: ['url'] }),
  url: Flags.string({ description: 'URL of a running server (ours or Meilisearch)' }),
  'api-key': Flags.string({ description: 'API key for --url', env: 'SEARCH_API_KEY' }),
};

export const jsonFlag = {
  json: Flags.boolean({ description: 'print one JSON report on stdout: {status, taskUid, error: {code, message}, ...}', default: false }),
};
