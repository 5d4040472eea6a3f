/** The public view of task records: the wire shape, without the processing payload. */
import type { SummarizedTask, Task } from '../types.js';
import type { TaskRecord } from './store.js';

export function publicTask(record: TaskRecord): Task {
  return {
    uid: record.uid,
    batchUid: record.batchUid,
    indexUid: record.indexUid,
    status: record.status,
    type: record.type,
    canceledBy: record.canceledBy,
    details: record.details,
    error: record.error,
    duration: record.duration,
    enqueuedAt: record.enqueuedAt,
    startedAt: record.startedAt,
    finishedAt: record.finishedAt,
    ...(record.customMetadata !== undefined ? { customMetadata: record.customMetadata } : {}),
  };
}

export function summarizedTask(record: TaskRecord): SummarizedTask {
  return {
    taskUid: record.uid,
    indexUid: record.indexUid,
    status: record.status,
    type: record.type,
    enqueuedAt: record.enqueuedAt,
    ...(record.customMetadata !== undefined ? { customMetadata: record.customMetadata } : {}),
  };
}
