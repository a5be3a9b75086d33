// Intentionally empty: this unit is built by issue 8. It exports nothing yet.
export {};
