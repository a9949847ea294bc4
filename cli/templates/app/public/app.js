// The page talks only to its own server: /auth/* to sign in and out, /api/svc/v3/* for the
// platform's REST v3 API (the server adds the token; this script never sees one).

const $ = (id) => document.getElementById(id);
const API = '/api/svc/v3';
let session = { signedIn: false };
let cursor = null;

function show(message) {
  $('message').textContent = message;
}

async function api(path, init = {}) {
  const headers = { accept: 'application/json', ...init.headers };
  if (init.body !== undefined) headers['content-type'] = 'application/json';
  if (init.method && init.method !== 'GET') headers['x-csrf-token'] = session.csrfToken;
  const response = await fetch(`${API}${path}`, { ...init, headers });
  const body = response.status === 204 ? undefined : await response.json().catch(() => undefined);
  if (response.status === 401) {
    await refreshSession();
    throw new Error('Your session ended: sign in again.');
  }
  if (!response.ok) throw new Error(body?.error?.message ?? `The platform answered ${response.status}.`);
  return body;
}

function row(resource) {
  const tr = document.createElement('tr');
  for (const value of [resource.name ?? resource.id, resource.status ?? '', new Date(resource.updatedAt).toLocaleString()]) {
    const td = document.createElement('td');
    td.textContent = value;
    tr.append(td);
  }
  return tr;
}

async function loadResources(append = false) {
  const type = $('type').value;
  const query = new URLSearchParams({ type, limit: '20', sort: '-updatedAt' });
  if (append && cursor) query.set('cursor', cursor);
  try {
    const page = await api(`/resources?${query}`);
    if (!append) $('rows').replaceChildren();
    $('rows').append(...page.data.map(row));
    cursor = page.hasMore ? page.nextCursor : null;
    $('more').hidden = !cursor;
    $('summary').textContent = `${page.total} ${type} resource${page.total === 1 ? '' : 's'}`;
    $('new-type').textContent = type;
    show('');
  } catch (error) {
    show(error.message);
  }
}

async function refreshSession() {
  session = await (await fetch('/auth/session', { headers: { accept: 'application/json' } })).json();
  $('sign-in').hidden = session.signedIn;
  $('sign-out').hidden = !session.signedIn;
  $('signed-out').hidden = session.signedIn;
  $('resources').hidden = !session.signedIn;
  $('user').textContent = session.signedIn ? session.user.email ?? session.user.name ?? '' : '';
}

$('type-form').addEventListener('submit', (event) => {
  event.preventDefault();
  loadResources();
});
$('more').addEventListener('click', () => loadResources(true));
$('create-form').addEventListener('submit', async (event) => {
  event.preventDefault();
  try {
    await api(`/resources/${encodeURIComponent($('type').value)}`, { method: 'POST', body: JSON.stringify({ name: $('new-name').value }) });
    $('new-name').value = '';
    await loadResources();
  } catch (error) {
    show(error.message);
  }
});
$('sign-out').addEventListener('click', async () => {
  await fetch('/auth/logout', { method: 'POST', headers: { 'x-csrf-token': session.csrfToken } });
  await refreshSession();
  $('rows').replaceChildren();
});

await refreshSession();
if (session.signedIn) await loadResources();
