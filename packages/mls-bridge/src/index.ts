// Intentionally empty: this unit is built by issue 7. It exports nothing yet.
export {};
