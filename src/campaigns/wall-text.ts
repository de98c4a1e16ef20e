import LinkifyIt from 'linkify-it';
import tlds from 'tlds';

/** What a link in a donor's text becomes on the wall. */
export const LINK_REMOVED = '[link removed]';

/**
 * Finds links the way markdown-it does (schemes, `www.`, `//host`, e-mail addresses, IPs, and
 * bare domains of every TLD IANA lists, not only linkify-it's short default list), so a public
 * wall is no billboard for spam and shows no address.
 */
const linkify = new LinkifyIt({ fuzzyIP: true }).tlds(tlds, true);

/**
 * A donor's text as the wall shows it: every link replaced by {@link LINK_REMOVED}. The
 * answer is JSON and the page renders it as text, never as HTML.
 */
export function withoutLinks(text: string): string {
  const matches = linkify.match(text);
  if (!matches) return text;
  let out = '';
  let from = 0;
  for (const match of matches) {
    out += text.slice(from, match.index) + LINK_REMOVED;
    from = match.lastIndex;
  }
  return out + text.slice(from);
}
