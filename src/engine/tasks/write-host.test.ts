import { describe, expect, test } from 'vitest';
import { writeHostKind } from './write-host.js';

const MIB = 1024 * 1024;

describe('where the write side runs', () => {
  test('a child process under a memory limit below 4 GiB, whose exit returns what a build took; a thread otherwise', () => {
    expect(writeHostKind(undefined, 512 * MIB)).toBe('process');
    expect(writeHostKind(undefined, 4095 * MIB)).toBe('process');
    expect(writeHostKind(undefined, 4096 * MIB)).toBe('thread');
    expect(writeHostKind('auto', 24 * 1024 * MIB)).toBe('thread');
  });

  test('SEARCH_WRITE_PROCESS=on|off decides whatever the memory', () => {
    expect(writeHostKind('on', 24 * 1024 * MIB)).toBe('process');
    expect(writeHostKind(' ON ', 24 * 1024 * MIB)).toBe('process');
    expect(writeHostKind('off', 512 * MIB)).toBe('thread');
    expect(writeHostKind('0', 512 * MIB)).toBe('thread');
  });
});
