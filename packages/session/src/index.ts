// Intentionally empty: this unit is built by issue 4. It exports nothing yet.
export {};
