"""Building the workbench: the start configuration read once (`config`), what it asks to keep or reach
opened and locked (`opening`), and the one builder (`builder`) that assembles the runtime with every
holder in order, for the app, the scripts, the tests and the drift lab's policies. Below the session and
the lab, above the stores, memories and the runtime it puts together. Light to import: nothing here
loads until asked for."""
