// Intentionally empty: this unit is built by issue 5. It exports nothing yet.
export {};
