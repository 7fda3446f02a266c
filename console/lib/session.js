/**
 * The login of this tab: the token in sessionStorage (gone when the tab closes, never shared with
 * other tabs or sent anywhere but this server), and who it is.
 */

const TOKEN_KEY = 'dms.token';
const WHO_KEY = 'dms.who';

/**
 * Who the tab is logged in as, and what the API lets that account do (`may`, from
 * `GET /console/session`: the API's own permission per action).
 * @typedef {{ account: string, identity: string | null, admin: boolean, root: boolean, may?: Record<string, boolean> }} Who
 */

/**
 * Whether the console offers an action: the API's own answer for this account.
 * @param {Who | null | undefined} identity
 * @param {string} action
 */
export const can = (identity, action) => Boolean(identity?.may?.[action]);

/** @returns {string | null} */
export const token = () => sessionStorage.getItem(TOKEN_KEY);

/** @returns {Who | null} */
export const who = () => {
  const text = sessionStorage.getItem(WHO_KEY);
  if (!text) return null;
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
};

/**
 * @param {string} newToken
 * @param {Who} identity
 */
export const remember = (newToken, identity) => {
  sessionStorage.setItem(TOKEN_KEY, newToken);
  sessionStorage.setItem(WHO_KEY, JSON.stringify(identity));
};

export const forget = () => {
  sessionStorage.removeItem(TOKEN_KEY);
  sessionStorage.removeItem(WHO_KEY);
};
