/**
 * The console page's hash routes (console-ui/src/router.ts): what each
 * address opens, that the links the views write open what they name (ids
 * with slashes, spaces or `%` included), and that a broken address opens
 * the not-found page instead of throwing.
 */
import { link, parseRoute } from '../../console-ui/src/router';

describe('console routes', () => {
  it.each([
    ['', { view: 'overview' }],
    ['#/', { view: 'overview' }],
    ['#/documents/abc', { view: 'document', id: 'abc' }],
    ['#/instances/pi-1', { view: 'instance', id: 'pi-1' }],
    ['#/documents/%E0%A4%A', { view: 'not-found', hash: '#/documents/%E0%A4%A' }],
    ['#/documents/a/b', { view: 'not-found', hash: '#/documents/a/b' }],
    ['#/nowhere', { view: 'not-found', hash: '#/nowhere' }],
    ['#/incidents/x', { view: 'not-found', hash: '#/incidents/x' }],
    ['#/waiting/x', { view: 'not-found', hash: '#/waiting/x' }],
    ['#/tasks/t-1', { view: 'task', id: 't-1' }],
    ['#/tasks/t-1/complete', { view: 'not-found', hash: '#/tasks/t-1/complete' }],
    ['#/tasks/%E0%A4%A', { view: 'not-found', hash: '#/tasks/%E0%A4%A' }],
  ])('%s opens %j', (hash, want) => {
    expect(parseRoute(hash)).toEqual(want);
  });

  it('keeps the filters of a list, a "?" inside a value included', () => {
    const route = parseRoute(link.documents({ status: 'PARKED', reason: 'AMBIGUOUS', key: 'a?b=c', after: 'doc 9' }));
    expect(route.view).toBe('documents');
    const params = route.view === 'documents' ? Object.fromEntries(route.params) : {};
    expect(params).toEqual({ status: 'PARKED', reason: 'AMBIGUOUS', key: 'a?b=c', after: 'doc 9' });
    expect(link.documents({ status: undefined, reason: '' })).toBe('#/documents');
  });

  it('opens the incident list, resolved ones on request, and the waiting list with its filters', () => {
    const open = parseRoute(link.incidents());
    expect(open.view === 'incidents' ? open.params.get('all') : 'not incidents').toBeNull();
    const all = parseRoute(link.incidents(true));
    expect(all.view === 'incidents' ? all.params.get('all') : 'not incidents').toBe('true');
    const waiting = parseRoute(link.waiting({ message: 'TaskCompleted', olderThan: '7d', after: undefined }));
    expect(waiting.view === 'waiting' ? Object.fromEntries(waiting.params) : {}).toEqual({
      message: 'TaskCompleted',
      olderThan: '7d',
    });
    expect(link.waiting()).toBe('#/waiting');
  });

  it('opens the user-task list with its filters and its cursor', () => {
    const tasks = parseRoute(link.tasks({ status: 'OPEN', group: 'reviewers', after: 'c?1', assignee: '' }));
    expect(tasks.view === 'tasks' ? Object.fromEntries(tasks.params) : {}).toEqual({
      status: 'OPEN',
      group: 'reviewers',
      after: 'c?1',
    });
    expect(link.tasks()).toBe('#/tasks');
  });

  it.each(['plain', 'with/slash', 'with space', '100%', 'ünï'])('a link to %s opens it', (id) => {
    expect(parseRoute(link.document(id))).toEqual({ view: 'document', id });
    expect(parseRoute(link.instance(id))).toEqual({ view: 'instance', id });
    expect(parseRoute(link.task(id))).toEqual({ view: 'task', id });
    const instances = parseRoute(link.instances(id));
    expect(instances.view === 'instances' ? instances.params.get('businessKey') : null).toBe(id);
  });
});
