/** `/tasks`: list, get one, the documents of one, cancel and delete by filter. */
import { Readable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { featureNotEnabled, TASK_DOCUMENTS_ACTION } from '../../engine/experimental-features.js';
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
