/**
 * Which messages hermes sends, and where: every message whose event type matches one of
 * `event_types` goes to the destination of the first route whose pattern matches it, else to
 * `destination`. Patterns match the whole event type as it is sent (lower case, as Rucio's hermes
 * sends it), `*` standing for any text: `transfer-*`, `rule_ok`, `*`.
 */
export type MessageRoute = Readonly<{ pattern: string; destination: string }>;

export type MessageRouting = Readonly<{
  destination: string;
  routes: readonly MessageRoute[];
  eventTypes: readonly string[];
}>;

const PATTERN = /^[a-z0-9_*-]+$/;

const items = (text: string): string[] =>
  text
    .split(',')
    .map((item) => item.trim())
    .filter(Boolean);

/** Event type patterns, lower case; undefined when one is not a pattern. */
export const parseTypePatterns = (text: string): string[] | undefined => {
  const patterns = items(text).map((item) => item.toLowerCase());
  return patterns.every((pattern) => PATTERN.test(pattern)) ? patterns : undefined;
};

/** `pattern=destination` pairs in order; undefined when one is malformed. */
export const parseRoutes = (text: string): MessageRoute[] | undefined => {
  const routes: MessageRoute[] = [];
  for (const item of items(text)) {
    const separator = item.indexOf('=');
    if (separator < 0) return undefined;
    const pattern = item.slice(0, separator).trim().toLowerCase();
    const destination = item.slice(separator + 1).trim();
    if (!PATTERN.test(pattern) || !destination.startsWith('/')) return undefined;
    routes.push({ pattern, destination });
  }
  return routes;
};

const matches = (pattern: string, eventType: string): boolean => {
  const parts = pattern.split('*');
  if (parts.length === 1) return pattern === eventType;
  let at = 0;
  for (const [index, part] of parts.entries()) {
    if (index === 0) {
      if (!eventType.startsWith(part)) return false;
      at = part.length;
    } else if (index === parts.length - 1) {
      return eventType.length - part.length >= at && eventType.endsWith(part);
    } else {
      const found = eventType.indexOf(part, at);
      if (found < 0) return false;
      at = found + part.length;
    }
  }
  return true;
};

/** Where a message of this event type goes, or undefined when it is not sent. */
export const destinationOf = (routing: MessageRouting, eventType: string): string | undefined => {
  const type = eventType.toLowerCase();
  if (!routing.eventTypes.some((pattern) => matches(pattern, type))) return undefined;
  return routing.routes.find((route) => matches(route.pattern, type))?.destination ?? routing.destination;
};
