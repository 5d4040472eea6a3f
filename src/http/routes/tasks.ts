/** `/tasks`: list, get one, cancel and delete by filter. */
import type { FastifyInstance } from 'fastify';
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
