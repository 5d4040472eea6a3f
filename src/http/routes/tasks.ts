/** `/tasks`: list, get one, the documents of one, cancel and delete by filter. */
import { Readable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { featureNotEnabled, TASK_DOCUMENTS_ACTION, TASK_QUEUE_COMPACTION_ACTION } from '../../engine/experimental-features.js';
import { SearchError, toSearchError } from '../../engine/errors.js';
import { exactSize } from '../../engine/wire/size.js';
import type { Document } from '../../engine/types.js';
import type { HttpEngine } from '../engine-port.js';
import { checkKnownParams, parseUint } from '../query-params.js';
import { addRoute } from '../route.js';
import { parseTaskFilterQuery, parseTaskListQuery } from '../task-query.js';
import { assertTaskFilterAuthorized, visibleTask, visibleTasks } from '../auth.js';

export function taskRoutes(app: FastifyInstance, engine: HttpEngine): void {
  addRoute(app, {
    method: 'GET',
    url: '/tasks',
    action: 'tasks.get',
    handler: ({ request, query }) => visibleTasks(request, (q, scope) => engine.getTasks(q, scope), parseTaskListQuery(query)),
  });
  addRoute(app, {
    method: 'GET',
    url: '/tasks/:taskUid',
    action: 'tasks.get',
    handler: ({ request, query, params }) => {
      checkKnownParams(query, []);
      return visibleTask(request, engine.getTask(parseUint(params.taskUid!, 'taskUid', 'invalid_task_uid')));
    },
  });
  addRoute(app, {
    method: 'GET',
    url: '/tasks/:taskUid/documents',
    action: 'tasks.get',
    handler: ({ request, reply, query, params }) => {
      checkKnownParams(query, []);
      // the reference's order: the feature, the uid, the task (as the key may see it), its payload
      if (!engine.getExperimentalFeatures().getTaskDocumentsRoute) throw featureNotEnabled('getTaskDocumentsRoute', TASK_DOCUMENTS_ACTION);
      const uid = parseUint(params.taskUid!, 'taskUid', 'invalid_task_uid');
      visibleTask(request, engine.getTask(uid));
      const documents = engine.taskDocuments(uid);
      reply.type('application/x-ndjson');
      return Readable.from(ndjsonLines(documents));
    },
  });
  // Synchronous and not a task, as in the reference: the sizes, or 500 with the reason.
  addRoute(app, {
    method: 'POST',
    url: '/tasks/compact',
    action: 'tasks.compact',
    handler: async ({ reply, query }) => {
      checkKnownParams(query, []);
      if (!engine.getExperimentalFeatures().taskQueueCompactionRoute) throw featureNotEnabled('taskQueueCompactionRoute', TASK_QUEUE_COMPACTION_ACTION);
      if (!engine.compactTaskQueue) throw new SearchError('internal', 'This server cannot compact its task queue.');
      try {
        const { preSize, postSize } = await engine.compactTaskQueue();
        return { preSize: exactSize(preSize), postSize: exactSize(postSize), status: 'succeeded', actionRequired: 'you must restart your instance' };
      } catch (error) {
        const failure = toSearchError(error);
        if (failure.status < 500) throw failure;
        reply.code(500);
        return { status: 'failed', errorMessage: failure.message };
      }
    },
  });
  // Cancelation and deletion are tasks themselves but answer 200, as the reference does.
  addRoute(app, {
    method: 'POST',
    url: '/tasks/cancel',
    action: 'tasks.cancel',
    handler: ({ request, query }) => {
      const filter = parseTaskFilterQuery(query, 'cancel');
      assertTaskFilterAuthorized(request, filter);
      return engine.cancelTasks(filter);
    },
  });
  addRoute(app, {
    method: 'DELETE',
    url: '/tasks',
    action: 'tasks.delete',
    handler: ({ request, query }) => {
      const filter = parseTaskFilterQuery(query, 'delete');
      assertTaskFilterAuthorized(request, filter);
      return engine.deleteTasks(filter);
    },
  });
}

async function* ndjsonLines(documents: AsyncIterable<Document>): AsyncGenerator<string> {
  for await (const document of documents) yield JSON.stringify(document) + '\n';
}
