/**
 * The helper thread of a large merge (see `Graph.insertMany`): runs layer-0 searches on the
 * owner's graph through its shared memory, reading only, and returns the candidates.
 */
import { workerData } from 'node:worker_threads';
import { Graph, helperLoop } from './graph.js';
import type { CodeMetric } from './quantizer.js';
import type { Kernels } from './simd.js';

const data = workerData as { memory: Kernels['memory']; ctrl: SharedArrayBuffer; stride: number; metric: CodeMetric; M: number; efConstruction: number };
const graph = new Graph(data.stride, data.metric, { M: data.M, efConstruction: data.efConstruction }, data.memory);
helperLoop(graph, new Int32Array(data.ctrl));
