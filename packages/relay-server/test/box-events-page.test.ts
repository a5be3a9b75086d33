import { describe, expect, it } from 'vitest';
import { eventsPageText } from '../src/box-api/events-page.js';

describe('eventsPageText (the GET /events body)', () => {
  it('adds each seq to the stored JSON and keeps the page fields', () => {
    const text = eventsPageText({
      items: [
        { seq: 4, json: '{"id":"a","body":"x"}' },
        { seq: 9, json: '{"id":"b","body":"é"}' },
      ],
      next: 9,
      more: true,
    });
    expect(JSON.parse(text)).toEqual({
      events: [
        { id: 'a', body: 'x', seq: 4 },
        { id: 'b', body: 'é', seq: 9 },
      ],
      next: 9,
      more: true,
    });
  });

  it('writes an empty page as valid JSON', () => {
    expect(JSON.parse(eventsPageText({ items: [], next: 3, more: false }))).toEqual({
      events: [],
      next: 3,
      more: false,
    });
  });
});
