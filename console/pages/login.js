import { ApiError, call, getJson } from '../lib/api.js';
import { errorBox, h, replace } from '../lib/dom.js';
import { remember } from '../lib/session.js';

/**
 * Login through the service's own /auth routes: userpass always; a certificate when a proxy
 * passes its DN (x509); OpenID Connect with each trusted provider, Rucio's polling flow (the
 * provider's page opens in a new tab, this page waits for the token).
 */
export const title = 'Log in';

/** @param {import('../app.js').View} view */
export const render = async (view) => {
  const options = await getJson('/console/login-options', { anonymous: true }).catch(() => ({
    userpass: true,
    x509: false,
    oidc: [],
  }));
  const back = view.query.get('back') || '#/';
  const message = h('div', { class: 'login-message', 'aria-live': 'polite' });
  if (view.query.get('expired'))
    replace(message, h('div', { class: 'alert warn' }, 'Your session ended: log in again.'));

  /** @param {Response} response */
  const finish = async (response) => {
    const newToken = response.headers.get('X-Svc-Auth-Token');
    if (!newToken) throw new Error('The server answered without a token.');
    const session = await getJson('/console/session', { headers: { 'X-Svc-Auth-Token': newToken }, anonymous: true });
    remember(newToken, session);
    view.navigate(back.startsWith('#/login') ? '#/' : back);
  };

  const username = h('input', { id: 'login-username', name: 'username', autocomplete: 'username', required: true });
  const password = h('input', {
    id: 'login-password',
    name: 'password',
    type: 'password',
    autocomplete: 'current-password',
    required: true,
  });
  const account = h('input', {
    id: 'login-account',
    name: 'account',
    autocomplete: 'off',
    placeholder: 'the identity’s default',
  });
  const submit = h('button', { type: 'submit', class: 'button primary wide' }, 'Log in');

  /** @param {SubmitEvent} event */
  const onSubmit = async (event) => {
    event.preventDefault();
    submit.disabled = true;
    replace(message);
    try {
      /** @type {Record<string, string>} */
      const headers = { 'X-Svc-Username': username.value, 'X-Svc-Password': password.value };
      if (account.value.trim()) headers['X-Svc-Account'] = account.value.trim();
      await finish(await call('/auth/userpass', { headers, anonymous: true }));
    } catch (error) {
      replace(message, errorBox(error instanceof ApiError && error.status === 401 ? new Error(error.message) : error));
      submit.disabled = false;
      password.focus();
    }
  };

  const x509 = async () => {
    replace(message);
    try {
      /** @type {Record<string, string>} */
      const headers = account.value.trim() ? { 'X-Svc-Account': account.value.trim() } : {};
      await finish(await call('/auth/x509/webui', { headers, anonymous: true }));
    } catch (error) {
      replace(message, errorBox(error));
    }
  };

  /** @param {string} nickname */
  const oidc = async (nickname) => {
    replace(message);
    try {
      /** @type {Record<string, string>} */
      const headers = { 'X-Svc-Client-Authorize-Issuer': nickname, 'X-Svc-Client-Authorize-Polling': 'True' };
      if (account.value.trim()) headers['X-Svc-Account'] = account.value.trim();
      const started = await call('/auth/oidc', { headers, anonymous: true });
      const given = started.headers.get('X-Svc-OIDC-Auth-URL');
      if (!given) throw new Error('The server gave no login URL.');
      window.open(given, '_blank', 'noopener');
      // The token is fetched from this origin, whichever host name the server wrote in the URL.
      const parsed = new URL(given, location.href);
      const url = `${parsed.pathname}${parsed.search}`;
      replace(
        message,
        h(
          'div',
          { class: 'alert info' },
          `Log in with ${nickname} in the tab that opened; this page goes on by itself.`,
        ),
      );
      const deadline = Date.now() + 5 * 60_000;
      while (Date.now() < deadline && !view.signal.aborted) {
        await new Promise((resolve) => setTimeout(resolve, 2000));
        try {
          await finish(await call(url, { headers: { 'X-Svc-Client-Fetch-Token': 'True' }, anonymous: true }));
          return;
        } catch (error) {
          if (!(error instanceof ApiError) || error.status !== 401) throw error;
        }
      }
      throw new Error('The login did not finish within five minutes.');
    } catch (error) {
      replace(message, errorBox(error));
    }
  };

  const others = [
    options.x509
      ? h('button', { type: 'button', class: 'button wide', onclick: x509 }, 'Log in with your certificate')
      : null,
    ...(options.oidc ?? []).map((/** @type {{ nickname: string }} */ provider) =>
      h(
        'button',
        { type: 'button', class: 'button wide', onclick: () => oidc(provider.nickname) },
        `Log in with ${provider.nickname} (OpenID Connect)`,
      ),
    ),
  ].filter(Boolean);

  replace(
    view.main,
    h(
      'div',
      { class: 'login' },
      h(
        'div',
        { class: 'login-card card' },
        h('h1', null, 'Log in to dms'),
        h(
          'p',
          { class: 'muted' },
          'Find data, ask for copies with rules, follow them; replay the history of what changed.',
        ),
        message,
        h(
          'form',
          { class: 'form', onsubmit: onSubmit },
          h('div', { class: 'field' }, h('label', { for: 'login-username' }, 'Username'), username),
          h('div', { class: 'field' }, h('label', { for: 'login-password' }, 'Password'), password),
          h(
            'div',
            { class: 'field' },
            h('label', { for: 'login-account' }, 'Account ', h('span', { class: 'muted' }, '(optional)')),
            account,
          ),
          submit,
        ),
        others.length > 0
          ? [h('div', { class: 'divider' }, h('span', null, 'or')), h('div', { class: 'stack' }, others)]
          : null,
      ),
    ),
  );
  username.focus();
};
