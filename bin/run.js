#!/usr/bin/env node
// The `search` command line: oclif finds the commands compiled to dist/commands (see package.json).
import { execute } from '@oclif/core';

await execute({ dir: import.meta.url });
