// `npm start` runs the relay once apps/relay exists (issue 5). Until then it says so and fails.
console.error(
  `npm start: the ${process.argv[2]} app is not implemented yet (see the issues list); nothing was started.`,
);
process.exit(1);
