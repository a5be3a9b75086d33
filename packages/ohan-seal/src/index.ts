// Intentionally empty: this unit is built by issue 3. It exports nothing yet.
export {};
