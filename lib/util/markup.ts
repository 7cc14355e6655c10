// Text put into XML, SVG or HTML (JUnit, charts, the sign-off and trend pages): the five
// characters markup gives meaning to, escaped the same way everywhere (&#39; is valid in both).
const ENTITIES: Readonly<Record<string, string>> = {
  "<": "&lt;",
  ">": "&gt;",
  "&": "&amp;",
  '"': "&quot;",
  "'": "&#39;",
};

/** `text` safe as element content or as a quoted attribute value. */
export function escapeMarkup(text: string): string {
  return text.replace(/[<>&"']/g, (c) => ENTITIES[c] ?? c);
}
