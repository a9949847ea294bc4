import { brief, type TextRenderer } from '../../output.ts';
import type { ChatAnswer, Citation } from '../../services/chat.service.ts';

/** Numbered sources under the answer: `[n] source (type): the quoted passage`. */
export const renderCitations: TextRenderer<Citation[]> = (citations, style) =>
  [style.simple ? 'Sources:' : style.colors.dim('Sources'), ...citations.map((c, i) => `[${i + 1}] ${c.source} (${c.sourceType}): ${brief(c.content.replace(/\s+/g, ' '), 100)}`)].join('\n');

/** The answer's text, then its sources when it has any. */
export const renderAnswer: TextRenderer<ChatAnswer> = (answer, style) =>
  answer.citations.length ? `${answer.answer}\n\n${renderCitations(answer.citations, style)}` : answer.answer;
